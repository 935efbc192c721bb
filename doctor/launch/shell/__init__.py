"""A bash front end for `doctor lint`: tree-sitter-bash parses, `interp` walks the script as bash would run it
(without running anything) and records every verl entry-point call with the words bash would pass it."""
