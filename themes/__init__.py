"""Theme files shipped with firsttoken (the top-level themes/ folder, packaged as tui.themes)."""
