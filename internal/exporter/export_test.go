package exporter

import "runtime"

func runtimeVersion() string { return runtime.Version() }
