"""The one place that touches Textual's private names: the compositor, layout and Markdown
adaptations that make a streamed reply cheap to paint."""
