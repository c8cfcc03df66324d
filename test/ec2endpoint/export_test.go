package ec2endpoint

// ServedCatalog is servedCatalog for the tests of package
// ec2endpoint_test: the types the endpoint serves by default.
var ServedCatalog = servedCatalog
