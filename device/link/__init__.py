# The floor link: the table side (docs/floor.md).
