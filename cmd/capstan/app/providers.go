package app

import (
	"github.com/capstan-dev/capstan/pkg/providers"
	"github.com/capstan-dev/capstan/pkg/providers/aws"
	"github.com/capstan-dev/capstan/pkg/providers/sim"
)

// providerList is the clouds `capstan controller` runs on, the first the
// default: explicit, not registered from init(). Adding a cloud adds one
// entry (docs/providers.md). Each call builds fresh values, since a
// provider parses its flags into itself.
func providerList() providers.List {
	return providers.List{sim.New(), aws.New()}
}
