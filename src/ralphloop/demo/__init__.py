"""`python -m ralphloop.demo`: a real loop with the scripted agent over a small sample project."""
