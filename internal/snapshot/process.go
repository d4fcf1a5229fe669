package snapshot

// TODO(helper): implement.
func collectProcess(c *collector) {}
