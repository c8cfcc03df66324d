package ec2endpoint

import (
	"context"
	"slices"
)

// PlacementGroup is one of the account's placement groups, with EC2's
// fields (API_PlacementGroup): strategy cluster, partition or spread;
// state pending, available, deleting or deleted (empty: available).
type PlacementGroup struct {
	ID, Name, Strategy, State, SpreadLevel string
	PartitionCount                         int32
}

type describePlacementGroupsResponse struct {
	responseMeta
	Groups []placementGroupXML `xml:"placementGroupSet>item"`
}

type placementGroupXML struct {
	GroupName      string `xml:"groupName"`
	GroupID        string `xml:"groupId"`
	GroupArn       string `xml:"groupArn"`
	Strategy       string `xml:"strategy"`
	State          string `xml:"state"`
	PartitionCount int32  `xml:"partitionCount,omitempty"`
	SpreadLevel    string `xml:"spreadLevel,omitempty"`
}

// describePlacementGroups answers Options.PlacementGroups by GroupId,
// GroupName and the filters EC2 documents for it (API_DescribePlacement
// Groups: group-name, group-arn, spread-level, state, strategy, tag:*,
// tag-key). A name or id the account does not have is an error, as
// EC2's answer: InvalidPlacementGroup.Unknown for a name,
// InvalidPlacementGroupId.NotFound for an id (EC2's error codes list).
func (s *Server) describePlacementGroups(_ context.Context, p params) (response, error) {
	fs, err := p.filters([]string{"group-name", "group-arn", "spread-level", "state", "strategy"}, true)
	if err != nil {
		return nil, err
	}
	ids, names := p.list("GroupId"), p.list("GroupName")
	all := make([]placementGroupXML, 0, len(s.opts.PlacementGroups))
	for _, g := range s.opts.PlacementGroups {
		state := g.State
		if state == "" {
			state = "available"
		}
		all = append(all, placementGroupXML{GroupName: g.Name, GroupID: g.ID, Strategy: g.Strategy, State: state,
			PartitionCount: g.PartitionCount, SpreadLevel: g.SpreadLevel, GroupArn: s.ec2ARN("placement-group", g.Name)})
	}
	for _, id := range ids {
		if !slices.ContainsFunc(all, func(g placementGroupXML) bool { return g.GroupID == id }) {
			return nil, errorf("InvalidPlacementGroupId.NotFound", "The Placement Group ID '%s' does not exist", id)
		}
	}
	for _, name := range names {
		if !slices.ContainsFunc(all, func(g placementGroupXML) bool { return g.GroupName == name }) {
			return nil, errorf("InvalidPlacementGroup.Unknown", "The Placement Group '%s' is unknown.", name)
		}
	}
	out := &describePlacementGroupsResponse{}
	for _, g := range all {
		r := resource{fields: map[string][]string{
			"group-name": {g.GroupName}, "group-arn": {g.GroupArn}, "spread-level": {g.SpreadLevel}, "state": {g.State}, "strategy": {g.Strategy},
		}}
		if (len(ids) == 0 || slices.Contains(ids, g.GroupID)) && (len(names) == 0 || slices.Contains(names, g.GroupName)) && matches(fs, r) {
			out.Groups = append(out.Groups, g)
		}
	}
	return out, nil
}
