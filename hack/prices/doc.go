// Command prices writes the embedded on-demand price tables of the AWS
// provider (pkg/cloudprovider/aws/prices/<partition>.txt): Linux,
// shared-tenancy (and bare-metal) on-demand prices per hour for every
// region of a partition, read from the AWS Price List's bulk offer files
// with the filters the provider sends the Price List API
// (aws.OnDemandPriceQueries). Run it from the module root:
//
//	go run ./hack/prices -partition aws                        # from pricing.us-east-1.amazonaws.com
//	go run ./hack/prices -partition aws -source DIR            # from a copy of the offer files
//	go run ./hack/prices -partition aws -reference FILE.go     # from the reference's generated table
//
// docs/aws.md ("Prices") says which was used for the committed tables.
package main
