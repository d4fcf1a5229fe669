package snapshot

// TODO(helper): implement.
func collectKernel(c *collector) {}
