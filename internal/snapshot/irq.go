package snapshot

// TODO(helper): implement.
func collectIRQ(c *collector) {}
