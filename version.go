package sluice

// Version is the release of this build. A release build stamps it:
// go build -ldflags "-X github.com/sluicesql/sluice.Version=1.2.3"
// (scripts/release.sh).
var Version = "0.1.0-dev"
