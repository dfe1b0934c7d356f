// Package sigma translates Sigma detection rules into Sluice SQL.
//
// Sigma (https://github.com/SigmaHQ/sigma-specification) describes
// detections over log events in YAML: search identifiers made of field
// tests (with value modifiers such as contains, startswith, re, cidr),
// joined by a condition (and, or, not, 1 of / all of). Correlation rules
// count, over a time span, the events other rules match.
//
// Names in the ruleset form are SQL identifiers, unique in the script:
// a rule's is its Sigma name, title or id made one (Query.Name), a part
// of a split condition's that and _partN (Query.PartNames), an object's
// the ruleset's name and the rule's, numbered if two would be one.
//
// Translation has three steps, each a value the next takes:
//
//   - Load reads rule files (multi-document YAML, directories of them)
//     into Documents, keeping each one's file and line.
//   - Translate turns the documents, with a Mapping (Sigma field names
//     to columns, the table, the logsources), into a Ruleset: one Query
//     per translated rule, with its condition as a SQL boolean expression,
//     and one Failure, with its reason, per rule it cannot translate.
//   - Script prints a Ruleset as a SQL script Sluice runs: by default
//     a CREATE RULESET of the detections of each table and, per
//     correlation, a view of the events it counts, a CREATE METRIC GROUP
//     of its aggregate over a sliding window and a CREATE RULESET that
//     tests its condition, with the
//     INSERTs of their alerts; or (ScriptOptions.StatementSet) one
//     statement set of an INSERT per rule. The Ruleset, not the script,
//     is the translation; both forms print it.
//
// Invariants:
//   - Every document read is either translated, consumed by a correlation
//     that references it, or reported as a Failure with its position and
//     reason: none is dropped silently.
//   - A condition's result is Sigma's for every event, including events
//     whose fields are missing (NULL): a test of a missing field is false,
//     and its negation true (NOT is rendered IS NOT TRUE).
//   - String tests are case-insensitive, as in Sigma, by comparing the
//     lower-cased column with the lower-cased value (LOWER uses the same
//     folding as the translator); the cased modifier, regular expressions
//     and CIDR tests compare the column itself.
//   - Untrusted input (rule files, mapping files) never panics; a fuzz
//     test holds the parser to it.
package sigma
