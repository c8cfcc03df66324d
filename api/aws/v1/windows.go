package v1

// Builds of the Windows AMI families: the node.kubernetes.io/windows-build
// label their nodes carry (the reference's pkg/apis/v1/labels.go).
const (
	Windows2019Build = "10.0.17763"
	Windows2022Build = "10.0.20348"
	Windows2025Build = "10.0.26100"
)
