"""The web app: its server and pages."""
