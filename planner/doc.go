// Package planner turns parsed SQL into logical plans: it resolves names
// against the catalog and the query's scopes, binds and types expressions
// (package expr), recognises window aggregations, and checks what Flink
// checks (grouping, time attributes, sinks that cannot take updates).
//
// Errors are *token.Error values positioned in the statement's source, and
// name what was expected; unknown names come with the nearest known one.
package planner
