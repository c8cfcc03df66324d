package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/capstan-dev/capstan/api"
	v1 "github.com/capstan-dev/capstan/api/v1"
	"github.com/capstan-dev/capstan/pkg/clusterstate"
	"github.com/capstan-dev/capstan/pkg/controllers/explainserver"
	"github.com/capstan-dev/capstan/pkg/disruption"
	"github.com/capstan-dev/capstan/pkg/explain"
	"github.com/capstan-dev/capstan/pkg/printable"
	"github.com/capstan-dev/capstan/pkg/scaleup"
	"github.com/capstan-dev/capstan/pkg/state"
)

// ExplainOptions are what `capstan explain` is run with.
type ExplainOptions struct {
	// Controller is the running controller's metrics address; empty
	// computes what the API alone allows.
	Controller string
	// ControllerCAFile verifies an https controller's certificate;
	// ControllerInsecure skips that (a self-signed certificate).
	ControllerCAFile   string
	ControllerInsecure bool
	Output             string
	Namespace          string
	SchedulerNames     []string
}

func newExplainCommand() *cobra.Command {
	opts := ExplainOptions{}
	cmd := &cobra.Command{
		Use:   "explain pod NAMESPACE/NAME | nodepool NAME | node NAME | provisioningrequest NAMESPACE/NAME",
		Short: "Say why: why a pod is pending, what a NodePool has and costs, why a node is what it is, where a ProvisioningRequest stands",
		Long: `explain asks the running controller (--controller-address, its metrics
address) for its live view: the instance types, offerings and
unavailable-offerings cache only it holds: over https with the
kubeconfig's credentials, over http with none, following no redirect.
Without one it computes what the API alone allows (KUBECONFIG) and says
what it cannot know.`,
		Example: "  capstan explain pod default/web-0 --controller-address http://localhost:8080\n  capstan explain nodepool default -o json",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExplain(cmd.Context(), cmd.OutOrStdout(), opts, args[0], args[1])
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Controller, "controller-address", "", "the controller's metrics address, e.g. http://localhost:8080 (default: compute from the API alone)")
	f.StringVar(&opts.ControllerCAFile, "controller-ca-file", "", "CA certificate that signed an https controller's serving certificate")
	f.BoolVar(&opts.ControllerInsecure, "controller-insecure-skip-tls-verify", false, "do not verify an https controller's certificate (its default is self-signed); the kubeconfig's credentials are still sent")
	f.StringVarP(&opts.Output, "output", "o", "text", "output format: text or json")
	f.StringVarP(&opts.Namespace, "namespace", "n", "default", "the pod's namespace when NAME has none")
	f.StringSliceVar(&opts.SchedulerNames, "scheduler-names", []string{corev1.DefaultSchedulerName}, "the schedulers Capstan serves, as the controller's flag (without a controller)")
	return cmd
}

func runExplain(ctx context.Context, w io.Writer, opts ExplainOptions, kind, name string) error {
	if opts.Output != "text" && opts.Output != "json" {
		return fmt.Errorf("unknown output format %q (want text or json)", opts.Output)
	}
	q, err := newQuestion(kind, name, opts.Namespace)
	if err != nil {
		return err
	}
	var answer any
	switch kind {
	case "pod":
		answer = &explain.Pod{}
	case "nodepool":
		answer = &explain.NodePool{}
	case "provisioningrequest":
		answer = &explain.ProvisioningRequest{}
	default:
		answer = &explain.Node{}
	}
	if opts.Controller != "" {
		err = ask(ctx, opts, q, answer)
	} else {
		err = computeOffline(ctx, opts, q.path, answer)
	}
	if err != nil {
		return err
	}
	if opts.Output == "json" {
		data, err := json.MarshalIndent(answer, "", "  ")
		if err != nil {
			return err
		}
		// The answer's strings come from cluster objects anyone may
		// write (Events, conditions); encoding/json leaves some that a
		// terminal obeys.
		_, err = w.Write(append(printable.JSON(data), '\n'))
		return err
	}
	switch a := answer.(type) {
	case *explain.Pod:
		return explain.WritePod(w, *a)
	case *explain.NodePool:
		return explain.WriteNodePool(w, *a)
	case *explain.ProvisioningRequest:
		return explain.WriteProvisioningRequest(w, *a)
	default:
		return explain.WriteNode(w, *answer.(*explain.Node))
	}
}

// newQuestion is what to ask about: the request path, the one both
// modes answer, and the object.
func newQuestion(kind, name, namespace string) (question, error) {
	switch kind {
	case "pod", "provisioningrequest":
		ns, objName, found := strings.Cut(name, "/")
		if !found {
			ns, objName = namespace, name
		}
		return question{path: explainserver.Path + kind + "/" + url.PathEscape(ns) + "/" + url.PathEscape(objName), kind: kind, name: ns + "/" + objName}, nil
	case "nodepool", "node":
		return question{path: explainserver.Path + kind + "/" + url.PathEscape(name), kind: kind, name: name}, nil
	}
	return question{}, fmt.Errorf("cannot explain %q: want pod, nodepool, node or provisioningrequest", kind)
}

// computeOffline answers from the API alone.
func computeOffline(ctx context.Context, opts ExplainOptions, path string, into any) error {
	scheme, err := api.NewScheme()
	if err != nil {
		return err
	}
	cfg, err := getConfig()
	if err != nil {
		return fmt.Errorf("loading kubeconfig, %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("connecting to the API server, %w", err)
	}
	parts := strings.Split(strings.TrimPrefix(path, explainserver.Path), "/")
	for i := range parts {
		if parts[i], err = url.PathUnescape(parts[i]); err != nil {
			return err
		}
	}
	switch out := into.(type) {
	case *explain.Pod:
		return offlinePod(ctx, c, opts, parts[1], parts[2], out)
	case *explain.NodePool:
		objs, err := clusterstate.List(ctx, c, clusterstate.Sources{CapacityBuffers: true})
		if err != nil {
			return err
		}
		np := &v1.NodePool{}
		if err := c.Get(ctx, client.ObjectKey{Name: parts[1]}, np); err != nil {
			return fmt.Errorf("getting nodepool %s, %w", parts[1], err)
		}
		snapshot := state.Build(objs, nil, opts.SchedulerNames)
		dis := disruption.NewInput(objs, snapshot, disruption.Policies{})
		dis.Pods, dis.Snapshot.Input.TermRequests = scaleup.PinFlavors(dis.Pods, clusterstate.OpenModels(ctx, c, c.RESTMapper(), dis.Pods))
		*out, err = explain.ForNodePool(explain.NodePoolInput{NodePool: np, Nodes: snapshot.Input.Nodes, NodeClaims: objs.NodeClaims, Disruption: &dis, Now: time.Now()})
		return err
	case *explain.ProvisioningRequest:
		objs, err := clusterstate.List(ctx, c, clusterstate.Sources{CapacityBuffers: true})
		if err != nil {
			return err
		}
		req, err := explainserver.FindProvisioningRequest(ctx, c, objs, parts[1], parts[2])
		if err != nil {
			return fmt.Errorf("getting provisioningrequest %s/%s, %w", parts[1], parts[2], err)
		}
		*out = explain.ForProvisioningRequest(req, state.Build(objs, nil, opts.SchedulerNames), time.Now())
	case *explain.Node:
		nc, err := explainserver.FindNodeClaim(ctx, c, parts[1])
		if err != nil {
			return fmt.Errorf("finding the nodeclaim of %s, %w", parts[1], err)
		}
		objs, err := clusterstate.List(ctx, c, clusterstate.Sources{CapacityBuffers: true})
		if err != nil {
			return err
		}
		dis := disruption.NewInput(objs, state.Build(objs, nil, opts.SchedulerNames), disruption.Policies{})
		dis.Pods, dis.Snapshot.Input.TermRequests = scaleup.PinFlavors(dis.Pods, clusterstate.OpenModels(ctx, c, c.RESTMapper(), dis.Pods))
		*out = explain.ForNode(explain.NodeInput{NodeClaim: nc, Disruption: &dis, Offline: true, Now: time.Now()})
	}
	return nil
}

func offlinePod(ctx context.Context, c client.Client, opts ExplainOptions, namespace, name string, out *explain.Pod) error {
	p := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, p); err != nil {
		return fmt.Errorf("getting pod %s/%s, %w", namespace, name, err)
	}
	objs, err := clusterstate.List(ctx, c, clusterstate.Sources{CapacityBuffers: true})
	if err != nil {
		return err
	}
	last, err := lastCapstanEvent(ctx, c, p)
	if err != nil {
		return err
	}
	*out = explain.ForPod(explain.PodInput{
		Pod: p, Snapshot: state.Build(objs, nil, opts.SchedulerNames), SchedulerNames: opts.SchedulerNames, Offline: true, LastEvent: last,
	})
	return nil
}

// lastCapstanEvent is the newest event Capstan recorded on the pod, as
// "Reason: message".
func lastCapstanEvent(ctx context.Context, c client.Client, p *corev1.Pod) (string, error) {
	events := &corev1.EventList{}
	if err := c.List(ctx, events, client.InNamespace(p.Namespace)); err != nil {
		return "", fmt.Errorf("listing events of pod %s, %w", p.Name, err)
	}
	var mine []corev1.Event
	for _, e := range events.Items {
		if e.InvolvedObject.UID == p.UID && (e.ReportingController == "capstan" || e.Source.Component == "capstan") {
			mine = append(mine, e)
		}
	}
	if len(mine) == 0 {
		return "", nil
	}
	latest := slices.MaxFunc(mine, func(a, b corev1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	return latest.Reason + ": " + latest.Message, nil
}

func eventTime(e corev1.Event) time.Time {
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	return e.LastTimestamp.Time
}
