package iampolicy

import "testing"

func TestParseRefuses(t *testing.T) {
	for name, doc := range map[string]string{
		"no effect":            `{"Statement":{"Action":"ec2:*","Resource":"*"}}`,
		"action and notaction": `{"Statement":{"Effect":"Allow","Action":"a:b","NotAction":"a:c","Resource":"*"}}`,
		"no resource":          `{"Statement":{"Effect":"Allow","Action":"a:b"}}`,
		"unknown operator":     `{"Statement":{"Effect":"Allow","Action":"a:b","Resource":"*","Condition":{"NumericLessThan":{"k":"1"}}}}`,
		"unknown qualifier":    `{"Statement":{"Effect":"Allow","Action":"a:b","Resource":"*","Condition":{"ForSome:StringEquals":{"k":"1"}}}}`,
	} {
		if _, err := Parse(name, []byte(doc)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}
