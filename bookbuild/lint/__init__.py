"""Page lints: typed numbers, alt text, claims and their checks, cell formatting, figure
layout."""
