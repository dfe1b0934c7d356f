// Package trim keeps the sluice binary's resident memory to the pages it
// uses: nearly all of a small job's resident set is the executable's own
// pages, and most of those only start-up touched.
package trim
