package mqtt

// Factory builds 'mqtt' sources and sinks.
type Factory struct{}

// New returns the 'mqtt' connector factory.
func New() Factory { return Factory{} }

// Name implements connector.Factory.
func (Factory) Name() string { return "mqtt" }

// ProvidesMetadata implements connector.MetadataFactory.
func (Factory) ProvidesMetadata(key string) bool { _, ok := metadataTypes[key]; return ok }
