package snapshot

// TODO(helper): implement.
func collectCPU(c *collector) {}
