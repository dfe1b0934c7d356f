// Package plan holds logical plans: trees of relational operators whose
// expressions are bound and typed (package expr). The planner (package
// planner) builds them from SQL; the physical translation (package
// physical) cuts them into stages of exec operators. Plans are data: they
// print themselves as trees for EXPLAIN.
//
// Invariants:
//   - Every node's Schema is fixed at construction; expressions of a node
//     refer to the columns of its input(s) by index.
//   - A node is append-only or updating (Updating); a consumer that cannot
//     take updates is rejected at planning time.
package plan
