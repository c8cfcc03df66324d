package ec2endpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/capstan-dev/capstan/test/ec2endpoint/iampolicy"
)

// ActionDescribeCluster is the IAM action of EKS's DescribeCluster.
const ActionDescribeCluster = "eks:DescribeCluster"

// defaultServiceCIDR is the service CIDR EKS picks for a cluster whose
// VPC is in 10.0.0.0/8, as the endpoint's is (EKS API reference,
// KubernetesNetworkConfigRequest.serviceIpv4Cidr: "10.100.0.0/16 or
// 172.20.0.0/16").
const defaultServiceCIDR = "172.20.0.0/16"

// eksRoute is the EKS operation a REST-JSON request names (the EKS API
// model in aws-sdk-go-v2/service/eks: DescribeCluster is GET
// /clusters/{name}), and its resource.
func eksRoute(r *http.Request) (action, cluster string, ok bool) {
	rest, found := strings.CutPrefix(r.URL.EscapedPath(), "/clusters/")
	if !found || r.Method != http.MethodGet || rest == "" || strings.Contains(rest, "/") {
		return "", "", false
	}
	name, err := url.PathUnescape(rest)
	if err != nil {
		return "", "", false
	}
	return ActionDescribeCluster, name, true
}

// ClusterARN is the ARN of the EKS cluster name in the endpoint's region
// and account, the resource eks:DescribeCluster is authorized on.
func (s *Server) ClusterARN(name string) string {
	return fmt.Sprintf("arn:aws:eks:%s:%s:cluster/%s", s.profile.Spec.Region, s.opts.AccountID, name)
}

// serveEKS answers an EKS request (action on cluster, from eksRoute),
// authorized on the cluster's ARN first as IAM does (a refusal is EKS's
// AccessDeniedException, 403). The one cluster is Options.ClusterName;
// another name is EKS's ResourceNotFoundException (HTTP 404). restJson1
// carries the error type in X-Amzn-ErrorType.
func (s *Server) serveEKS(ctx context.Context, w http.ResponseWriter, action, cluster string) {
	w.Header().Set("Content-Type", "application/json")
	var d *denial
	if errors.As(s.authorize(ctx, action, nil, iampolicy.Resource{ARN: s.ClusterARN(cluster)}), &d) {
		w.Header().Set("X-Amzn-ErrorType", "AccessDeniedException")
		writeJSON(w, http.StatusForbidden, map[string]string{"message": d.message()})
		return
	}
	if action != ActionDescribeCluster || cluster != s.opts.ClusterName {
		w.Header().Set("X-Amzn-ErrorType", "ResourceNotFoundException")
		writeJSON(w, http.StatusNotFound, map[string]string{"message": fmt.Sprintf("No cluster found for name: %s.", cluster), "clusterName": cluster})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"cluster": s.eksCluster()})
}

// eksCluster is the cluster as DescribeCluster describes it: ACTIVE with
// Options' endpoint and CA, or CREATING (no endpoint nor CA yet, as EKS
// answers while it makes them) when Options has none.
func (s *Server) eksCluster() map[string]any {
	status := "ACTIVE"
	if s.opts.ClusterEndpoint == "" || s.opts.ClusterCABundle == "" {
		status = "CREATING"
	}
	c := map[string]any{
		"name": s.opts.ClusterName, "arn": s.ClusterARN(s.opts.ClusterName), "status": status,
		"version":                 s.opts.KubernetesVersions[0],
		"kubernetesNetworkConfig": map[string]string{"serviceIpv4Cidr": s.opts.ServiceCIDR, "ipFamily": "ipv4"},
		"resourcesVpcConfig":      map[string]string{"vpcId": vpcID},
	}
	if status == "ACTIVE" {
		c["endpoint"] = s.opts.ClusterEndpoint
		c["certificateAuthority"] = map[string]string{"data": s.opts.ClusterCABundle}
	}
	return c
}

func writeJSON(w http.ResponseWriter, status int, doc any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(doc); err != nil {
		http.Error(w, "encoding the response: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}
