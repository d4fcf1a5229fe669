package snapshot

// hasProc reports whether the root has a usable proc/. Without it c.proc is
// the zero procfs.FS, whose paths are relative to the working directory, so
// collectors must not call it.
func (c *collector) hasProc() bool {
	_, bad := c.s.Unavailable["proc"]
	return !bad
}

// hasSys is hasProc for sys/ and c.sys.
func (c *collector) hasSys() bool {
	_, bad := c.s.Unavailable["sys"]
	return !bad
}
