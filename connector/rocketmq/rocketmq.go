package rocketmq

// Factory builds 'rocketmq' sources and sinks.
type Factory struct{}

// New returns the 'rocketmq' connector factory.
func New() Factory { return Factory{} }

// Name implements connector.Factory.
func (Factory) Name() string { return "rocketmq" }

// ProvidesMetadata implements connector.MetadataFactory.
func (Factory) ProvidesMetadata(key string) bool { _, ok := metadataTypes[key]; return ok }
