// Package prediction is the plugin's output: one document per run, printed
// as a table or as JSON/YAML. The JSON field names are a stable contract,
// documented in docs/output.md and checked against docs/schema.
package prediction
