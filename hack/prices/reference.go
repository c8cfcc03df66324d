package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/capstan-dev/capstan/pkg/cloudprovider/aws"
)

// generatedAt is the reference's "generated at" comment.
var generatedAt = regexp.MustCompile(`generated at (\S+)`)

// fromReference reads the prices of the reference's generated table
// (karpenter-provider-aws pkg/providers/pricing/zz_generated.pricing_*.go)
// as data: a map literal of regions to maps of types to prices. Nothing
// of it is compiled or copied but the numbers, which are AWS's.
func fromReference(path, partition string) (table, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return table{}, fmt.Errorf("parsing %s, %w", path, err)
	}
	date := "an unknown date"
	for _, cg := range f.Comments {
		if m := generatedAt.FindStringSubmatch(cg.Text()); m != nil {
			date = m[1]
		}
	}
	t := table{prices: map[string]map[string]float64{}, header: []string{
		"Linux on-demand prices per hour (USD; CNY in China) for the AWS provider's embedded table (docs/aws.md, \"Prices\").",
		fmt.Sprintf("Read by hack/prices -reference from aws/karpenter-provider-aws v1.14.1 pkg/providers/pricing/%s, generated at %s", filepath.Base(path), date),
		"from the AWS Price List API; regenerate from the bulk offer files as docs/aws.md says.",
	}}
	var perr error
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok || perr != nil {
			return perr == nil
		}
		region, ok := stringLit(kv.Key)
		lit, isMap := kv.Value.(*ast.CompositeLit)
		if !ok || !isMap {
			return true
		}
		prices := map[string]float64{}
		for _, e := range lit.Elts {
			pair, ok := e.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			name, ok := stringLit(pair.Key)
			num, isNum := pair.Value.(*ast.BasicLit)
			if !ok || !isNum || num.Kind != token.FLOAT && num.Kind != token.INT {
				return true
			}
			price, err := strconv.ParseFloat(num.Value, 64)
			if err != nil {
				perr = fmt.Errorf("%s: price of %s, %w", fset.Position(num.Pos()), name, err)
				return false
			}
			if price > 0 {
				prices[name] = price
			}
		}
		if len(prices) > 0 {
			t.prices[region] = prices
		}
		return false
	})
	if perr != nil {
		return table{}, perr
	}
	for region := range t.prices {
		if aws.Partition(region) != partition {
			return table{}, fmt.Errorf("%s prices %s, which is not in partition %s", path, region, partition)
		}
	}
	if len(t.prices) == 0 {
		return table{}, fmt.Errorf("%s has no price table", path)
	}
	return t, nil
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}
