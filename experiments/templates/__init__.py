"""HTML, CSS and JS of the trajectory viewer (a package so that wheels ship them as package data)."""
