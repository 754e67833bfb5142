"""Request bodies that continue a session on a model provider (``asif-convert request``)."""
