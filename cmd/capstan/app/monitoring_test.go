package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/yaml"

	"github.com/capstan-dev/capstan/pkg/cloudprovider"
)

// The chart's dashboard and alert rules query only metrics the controller
// registers (registerMetrics, as runController calls it): a renamed or
// misspelled metric fails here instead of showing an empty panel or an
// alert that can never fire.

var chartDir = filepath.Join("..", "..", "..", "charts", "capstan")

// describing registers collectors on a real registry (so conflicts fail
// as in the controller) and records the names of their descriptors, which
// a Vec has before it is ever observed.
type describing struct {
	*prometheus.Registry
	names map[string]bool
}

// fqName reads a descriptor's name from its String form, the only place
// client_golang exposes it.
var fqName = regexp.MustCompile(`fqName: "([^"]+)"`)

func (d *describing) Register(c prometheus.Collector) error {
	if err := d.Registry.Register(c); err != nil {
		return err
	}
	ch := make(chan *prometheus.Desc)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	for desc := range ch {
		if m := fqName.FindStringSubmatch(desc.String()); m != nil {
			d.names[m[1]] = true
		}
	}
	return nil
}

// namedCloud is enough of a cloud provider for registering its metrics.
type namedCloud struct{ cloudprovider.CloudProvider }

func (namedCloud) Name() string { return "sim" }

func servedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	reg := &describing{Registry: prometheus.NewPedanticRegistry(), names: map[string]bool{}}
	if _, err := registerMetrics(reg, nil, namedCloud{}); err != nil {
		t.Fatal(err)
	}
	return reg.names
}

var (
	// Literals and the parts of a query that hold label names, label
	// values or durations, never a metric name.
	stringLiteral = regexp.MustCompile("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'|`[^`]*`")
	matchers      = regexp.MustCompile(`\{[^}]*\}`)
	ranges        = regexp.MustCompile(`\[[^\]]*\]`)
	grouping      = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)`)
	identifier    = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*`)
	keywords      = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "inf": true, "nan": true,
		"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}
)

// metricNames are the metric names a PromQL expression selects: every
// identifier outside label matchers, ranges, grouping clauses and strings
// that is neither a function nor a keyword. Not a parser (Prometheus's is
// no dependency of Capstan's), but it errs towards reporting a name.
func metricNames(expr string) []string {
	for _, re := range []*regexp.Regexp{stringLiteral, matchers, ranges, grouping} {
		expr = re.ReplaceAllString(expr, " ")
	}
	var names []string
	for _, loc := range identifier.FindAllStringIndex(expr, -1) {
		name := expr[loc[0]:loc[1]]
		// Preceded by a digit or dot: a number's exponent or a duration's
		// unit; by $: a Grafana variable; followed by (: a function.
		if loc[0] > 0 && strings.ContainsAny(expr[loc[0]-1:loc[0]], "0123456789.$") ||
			strings.HasPrefix(strings.TrimLeft(expr[loc[1]:], " \t\n"), "(") || keywords[strings.ToLower(name)] {
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// unknownMetrics are the names expr selects that served lacks; a
// histogram's series are its name with _bucket, _sum or _count.
func unknownMetrics(expr string, served map[string]bool) []string {
	var unknown []string
	for _, n := range metricNames(expr) {
		base := n
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(n, s); ok && served[b] {
				base = b
			}
		}
		if !served[base] {
			unknown = append(unknown, n)
		}
	}
	return unknown
}

func TestMetricNames(t *testing.T) {
	served := map[string]bool{"capstan_provisioner_pending_pods": true, "capstan_x_seconds": true, "capstan_y_total": true}
	for _, tc := range []struct {
		expr           string
		names, unknown []string
	}{
		{`max(capstan_provisioner_pending_pods) > 0`, []string{"capstan_provisioner_pending_pods"}, nil},
		{`max(capstan_provisioner_pendng_pods) > 0`, []string{"capstan_provisioner_pendng_pods"}, []string{"capstan_provisioner_pendng_pods"}},
		{`histogram_quantile(0.99, sum by (le, nodepool) (rate(capstan_x_seconds_bucket{a="b c", le=~"1e3"}[$__rate_interval])))`,
			[]string{"capstan_x_seconds_bucket"}, nil},
		{`sum(increase(capstan_y_total[2h] offset 5m)) unless on () capstan_y_totl > 1e-3`,
			[]string{"capstan_y_total", "capstan_y_totl"}, []string{"capstan_y_totl"}},
		{`capstan_y_total{nodepool=~"$nodepool"} / ignoring(x) group_left(y) capstan_z`, []string{"capstan_y_total", "capstan_z"}, []string{"capstan_z"}},
		{`{__name__="capstan_y_total"}`, nil, nil},
		{`capstan_y_count`, []string{"capstan_y_count"}, []string{"capstan_y_count"}},
	} {
		if diff := cmp.Diff(tc.names, metricNames(tc.expr)); diff != "" {
			t.Errorf("metricNames(%s) (-want +got):\n%s", tc.expr, diff)
		}
		if diff := cmp.Diff(tc.unknown, unknownMetrics(tc.expr, served)); diff != "" {
			t.Errorf("unknownMetrics(%s) (-want +got):\n%s", tc.expr, diff)
		}
	}
}

// ruleFile is a Prometheus rule file, decoded strictly.
type ruleFile struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []struct {
			Alert       string            `json:"alert"`
			Expr        string            `json:"expr"`
			For         string            `json:"for,omitempty"`
			Labels      map[string]string `json:"labels"`
			Annotations map[string]string `json:"annotations"`
		} `json:"rules"`
	} `json:"groups"`
}

func TestAlertsQueryServedMetrics(t *testing.T) {
	served := servedMetrics(t)
	data, err := os.ReadFile(filepath.Join(chartDir, "alerts", "capstan.rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules ruleFile
	if err := yaml.UnmarshalStrict(data, &rules); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if len(metricNames(r.Expr)) == 0 {
				t.Errorf("alert %s selects no metric: %s", r.Alert, r.Expr)
			}
			if u := unknownMetrics(r.Expr, served); len(u) > 0 {
				t.Errorf("alert %s queries metrics capstan does not serve: %v", r.Alert, u)
			}
			if r.Labels["severity"] == "" || r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("alert %s needs a severity, a summary and a description", r.Alert)
			}
		}
	}
	if n == 0 {
		t.Error("no alert rules")
	}
}

// dashboard is the part of Grafana's dashboard model the chart relies on.
type dashboard struct {
	UID           string `json:"uid"`
	Title         string `json:"title"`
	SchemaVersion int    `json:"schemaVersion"`
	Templating    struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Datasource *datasource     `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int         `json:"id"`
		Type       string      `json:"type"`
		Title      string      `json:"title"`
		Datasource *datasource `json:"datasource"`
		GridPos    struct {
			X, Y, W, H int
		} `json:"gridPos"`
		Targets []struct {
			RefID      string      `json:"refId"`
			Expr       string      `json:"expr"`
			Datasource *datasource `json:"datasource"`
		} `json:"targets"`
	} `json:"panels"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

// labelValues is a Grafana variable query: label_values(metric, label).
var labelValues = regexp.MustCompile(`^label_values\(([^,]+),\s*[A-Za-z_][A-Za-z0-9_]*\)$`)

func TestDashboard(t *testing.T) {
	served := servedMetrics(t)
	data, err := os.ReadFile(filepath.Join(chartDir, "dashboards", "capstan.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("dashboard is not a Grafana dashboard: %v", err)
	}
	if d.UID == "" || d.Title == "" || d.SchemaVersion == 0 {
		t.Errorf("dashboard needs a uid, a title and a schemaVersion: %q %q %d", d.UID, d.Title, d.SchemaVersion)
	}
	// Every query goes to the data source the user picks.
	const ds = "${datasource}"
	picked := false
	for _, v := range d.Templating.List {
		switch v.Type {
		case "datasource":
			picked = v.Name == "datasource" && string(v.Query) == `"prometheus"`
		case "query":
			var q struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(v.Query, &q); err != nil {
				t.Errorf("variable %s: %v", v.Name, err)
			}
			m := labelValues.FindStringSubmatch(q.Query)
			if m == nil {
				t.Errorf("variable %s: query %q is not label_values(metric, label)", v.Name, q.Query)
				continue
			}
			if u := unknownMetrics(m[1], served); len(u) > 0 {
				t.Errorf("variable %s queries metrics capstan does not serve: %v", v.Name, u)
			}
			if v.Datasource == nil || v.Datasource.UID != ds {
				t.Errorf("variable %s does not query %s", v.Name, ds)
			}
		}
	}
	if !picked {
		t.Error("dashboard has no Prometheus datasource variable named datasource")
	}
	if len(d.Panels) == 0 {
		t.Fatal("dashboard has no panels")
	}
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("panel id %d is not unique", p.ID)
		}
		ids[p.ID] = true
		if p.Title == "" || p.Type == "" || p.GridPos.W <= 0 || p.GridPos.H <= 0 || p.GridPos.X+p.GridPos.W > 24 {
			t.Errorf("panel %d (%q): needs a title, a type and a place on the 24-column grid", p.ID, p.Title)
		}
		if p.Datasource == nil || p.Datasource.UID != ds {
			t.Errorf("panel %q does not query %s", p.Title, ds)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no targets", p.Title)
		}
		refs := map[string]bool{}
		for _, tg := range p.Targets {
			if tg.RefID == "" || refs[tg.RefID] {
				t.Errorf("panel %q: target refId %q missing or repeated", p.Title, tg.RefID)
			}
			refs[tg.RefID] = true
			if len(metricNames(tg.Expr)) == 0 {
				t.Errorf("panel %q: target %s selects no metric: %q", p.Title, tg.RefID, tg.Expr)
			}
			if u := unknownMetrics(tg.Expr, served); len(u) > 0 {
				t.Errorf("panel %q queries metrics capstan does not serve: %v", p.Title, u)
			}
			if tg.Datasource == nil || tg.Datasource.UID != ds {
				t.Errorf("panel %q: target %s does not query %s", p.Title, tg.RefID, ds)
			}
		}
	}
}
