"""The formats: a memory file, its frontmatter and body, MEMORY.md, slugs, witnesses, findings."""
