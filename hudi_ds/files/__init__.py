"""File names, file groups and file slices: which files make up the table as of an instant."""
