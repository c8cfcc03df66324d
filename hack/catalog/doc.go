// Command catalog writes pkg/cloudprovider/catalog/instancetypes.json from
// the facts in that package, so the embedded data is regenerated, never
// edited by hand. Run it from the module root:
//
//	go run ./hack/catalog          # rewrite the file
//	go run ./hack/catalog -check   # fail if the file is stale
package main
