package app

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/capstan-dev/capstan/pkg/readlimit"
)

// MaxKubeconfigBytes caps each kubeconfig file: client-go reads one
// whole, and real ones, even with embedded certificates, are kilobytes.
const MaxKubeconfigBytes = 16 << 20

// getConfig is ctrl.GetConfig once every kubeconfig file it may read is
// a regular file within MaxKubeconfigBytes, so KUBECONFIG=/dev/zero is
// an error naming the file rather than a read without end.
// docs/security.md ("Input limits") lists the limit.
func getConfig() (*rest.Config, error) {
	for _, path := range kubeconfigPaths() {
		if err := readlimit.Check(path, MaxKubeconfigBytes); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading %s, %w", path, err)
		}
	}
	return ctrl.GetConfig()
}

// kubeconfigPaths are the files ctrl.GetConfig's loading rules may read:
// every entry of $KUBECONFIG, else ~/.kube/config; ~/.kube/.kubeconfig,
// which client-go migrates to ~/.kube/config when that is missing; and
// the file ctrl.GetConfig adds when $HOME is unset. The commands
// register no --kubeconfig flag.
func kubeconfigPaths() []string {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	paths := rules.GetLoadingPrecedence()
	for _, src := range rules.MigrationRules {
		paths = append(paths, src)
	}
	if _, ok := os.LookupEnv("HOME"); !ok {
		if u, err := user.Current(); err == nil {
			paths = append(paths, filepath.Join(u.HomeDir, clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName))
		}
	}
	var out []string
	for _, p := range paths {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
