package ec2endpoint

// maxFilterValues is the most filter values one EC2 describe call takes:
// past it EC2 answers FilterLimitExceeded, "The maximum number of filter
// values specified on a single call is 200" (the error code: EC2 API
// Reference, "Error codes"; the limit and message as EC2 returns them,
// e.g. gjbae1212/gossm#31 and convox/rack#2205).
const maxFilterValues = 200

// checkFilterLimit refuses a call whose filters hold more than
// maxFilterValues values in all.
func checkFilterLimit(fs []filter) error {
	n := 0
	for _, f := range fs {
		n += len(f.values)
	}
	if n > maxFilterValues {
		return errorf("FilterLimitExceeded", "The maximum number of filter values specified on a single call is %d", maxFilterValues)
	}
	return nil
}
