package sluice

// Version is the release of this build.
const Version = "0.1.0-dev"
