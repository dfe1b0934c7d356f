package nats

// Factory builds 'nats' sources and sinks.
type Factory struct{}

// New returns the 'nats' connector factory.
func New() Factory { return Factory{} }

// Name implements connector.Factory.
func (Factory) Name() string { return "nats" }

// ProvidesMetadata implements connector.MetadataFactory.
func (Factory) ProvidesMetadata(key string) bool { _, ok := metadataTypes[key]; return ok }
