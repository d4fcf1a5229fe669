package snapshot

// TODO(helper): implement.
func collectMemory(c *collector) {}
