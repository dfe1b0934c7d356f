package server

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// Every route the router serves is in openapi.json, and every operation
// documented there is a route.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(openAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.0.") {
		t.Fatalf("openapi.json is OpenAPI %q, want 3.0.x", doc.OpenAPI)
	}
	var documented []string
	for path, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "put", "post", "delete", "patch", "head", "options", "trace":
				documented = append(documented, strings.ToUpper(method)+" "+path)
			}
		}
	}
	var served []string
	s := &Server{}
	for _, r := range s.routeTable() {
		served = append(served, r.method+" "+r.path)
	}
	slices.Sort(documented)
	slices.Sort(served)
	for _, r := range served {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in openapi.json", r)
		}
	}
	for _, r := range documented {
		if !slices.Contains(served, r) {
			t.Errorf("openapi.json documents %s, which the router does not serve", r)
		}
	}
}
