package ec2endpoint

import (
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/BurntSushi/toml"
)

// Bottlerocket's settings model for the settings.kubernetes keys a
// Karpenter-style provider writes. KubernetesSettingsV1 (in
// bottlerocket-os/bottlerocket-settings-sdk,
// bottlerocket-settings-models/settings-extensions/kubernetes/src/lib.rs)
// types each key; the types' rules are in
// bottlerocket-settings-models/modeled-types/src/kubernetes.rs
// (KubernetesClusterName, KubernetesLabelKey, KubernetesLabelValue,
// KubernetesTaintValue, KubernetesClusterDnsIp; the same regexes as
// bottlerocket-os/bottlerocket sources/models/modeled-types/src/kubernetes.rs)
// and shared.rs (ValidBase64, Url).
var (
	// kubernetesLabelKey is KUBERNETES_LABEL_KEY.
	kubernetesLabelKey = regexp.MustCompile(`^([[:alnum:].-]{1,253}/)?[[:alnum:]](([[:alnum:]._-]{0,61})?[[:alnum:]])?$`)
	// kubernetesLabelValue is KUBERNETES_LABEL_VALUE.
	kubernetesLabelValue = regexp.MustCompile(`^$|^[[:alnum:]](([[:alnum:]._-]{0,61})?[[:alnum:]])?$`)
	// kubernetesTaintValue is KUBERNETES_TAINT_VALUE: [value]:Effect.
	kubernetesTaintValue = regexp.MustCompile(`^([[:alnum:]](([[:alnum:]._-]{0,61})?[[:alnum:]])?)?:[[:alnum:]]{1,253}$`)
)

// bottlerocketRules check the value of each settings.kubernetes key the
// endpoint models; other keys are not checked.
var bottlerocketRules = map[string]func(v any) error{
	// KubernetesClusterName: not empty, and a label value.
	"cluster-name": func(v any) error {
		s, err := str(v)
		if err == nil && (s == "" || !kubernetesLabelValue.MatchString(s)) {
			err = fmt.Errorf("%q is not a cluster name (a non-empty label value)", s)
		}
		return err
	},
	// Url: no control characters; with or without a scheme, it parses
	// as a URL with a host.
	"api-server": func(v any) error {
		s, err := str(v)
		if err != nil {
			return err
		}
		if strings.ContainsFunc(s, unicode.IsControl) {
			return fmt.Errorf("%q contains a control character", s)
		}
		withScheme := s
		if !strings.Contains(s, "://") {
			withScheme = "http://" + s
		}
		if u, perr := url.Parse(withScheme); perr != nil || u.Host == "" {
			return fmt.Errorf("%q is not a URL", s)
		}
		return nil
	},
	// ValidBase64: standard base64 with padding.
	"cluster-certificate": func(v any) error {
		s, err := str(v)
		if err != nil {
			return err
		}
		if _, derr := base64.StdEncoding.DecodeString(s); derr != nil || strings.ContainsFunc(s, unicode.IsControl) {
			return errors.New("not valid base64")
		}
		return nil
	},
	// KubernetesClusterDnsIp: an IP address, or a list of them.
	"cluster-dns-ip": func(v any) error {
		ips, ok := v.([]any)
		if !ok {
			ips = []any{v}
		}
		for _, ip := range ips {
			s, err := str(ip)
			if err != nil {
				return err
			}
			if net.ParseIP(s) == nil {
				return fmt.Errorf("%q is not an IP address", s)
			}
		}
		return nil
	},
	// u32.
	"max-pods": func(v any) error {
		n, ok := v.(int64)
		if !ok || n < 0 || n > math.MaxUint32 {
			return fmt.Errorf("%v is not an unsigned 32-bit integer", v)
		}
		return nil
	},
	// HashMap<KubernetesLabelKey, KubernetesLabelValue>.
	"node-labels": func(v any) error {
		return eachKey(v, func(val any) error {
			s, err := str(val)
			if err == nil && !kubernetesLabelValue.MatchString(s) {
				err = fmt.Errorf("%q is not a label value", s)
			}
			return err
		})
	},
	// HashMap<KubernetesLabelKey, Vec<KubernetesTaintValue>> (a single
	// value is read as a list of one).
	"node-taints": func(v any) error {
		return eachKey(v, func(val any) error {
			values, ok := val.([]any)
			if !ok {
				values = []any{val}
			}
			for _, tv := range values {
				s, err := str(tv)
				if err != nil {
					return err
				}
				if !kubernetesTaintValue.MatchString(s) {
					return fmt.Errorf("%q is not a taint value ([value]:Effect)", s)
				}
			}
			return nil
		})
	},
}

// checkBottlerocket refuses settings Bottlerocket would refuse
// (BottlerocketKubernetes), without what a node needs to join
// (cluster-name, api-server, cluster-certificate), or naming another
// cluster than the endpoint's.
func (s *Server) checkBottlerocket(raw []byte) error {
	kube, err := BottlerocketKubernetes(raw)
	if err != nil {
		return err
	}
	for _, key := range []string{"cluster-name", "api-server", "cluster-certificate"} {
		if _, ok := kube[key]; !ok {
			return fmt.Errorf("bottlerocket: settings.kubernetes.%s is not set", key)
		}
	}
	return s.sameCluster(kube["cluster-name"].(string), kube["api-server"].(string), kube["cluster-certificate"].(string), "")
}

// BottlerocketKubernetes reads user data as Bottlerocket's TOML settings
// and returns the settings.kubernetes table, each key the endpoint
// models holding a value its type in Bottlerocket's settings model
// accepts (bottlerocketRules).
func BottlerocketKubernetes(raw []byte) (map[string]any, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(raw), &doc); err != nil {
		return nil, fmt.Errorf("bottlerocket: the settings are not TOML: %w", err)
	}
	settings, _ := doc["settings"].(map[string]any)
	kube, _ := settings["kubernetes"].(map[string]any)
	for _, key := range slices.Sorted(maps.Keys(bottlerocketRules)) {
		v, ok := kube[key]
		if !ok {
			continue
		}
		if err := bottlerocketRules[key](v); err != nil {
			return nil, fmt.Errorf("bottlerocket: settings.kubernetes.%s: %w", key, err)
		}
	}
	return kube, nil
}

func str(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%v is not a string", v)
	}
	return s, nil
}

// eachKey checks a table whose keys are label keys, and each value.
func eachKey(v any, value func(any) error) error {
	table, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%v is not a table", v)
	}
	for _, k := range slices.Sorted(maps.Keys(table)) {
		if !kubernetesLabelKey.MatchString(k) {
			return fmt.Errorf("%q is not a label key", k)
		}
		if err := value(table[k]); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}
