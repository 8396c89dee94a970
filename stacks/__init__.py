"""Stack programs: read a stack's configuration, build the components, export their outputs."""
