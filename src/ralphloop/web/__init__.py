"""`ralph serve`: every loop of the project live in a browser. snapshot.py and live.py read the files (plain
Python); app.py and server.py are the optional `web` extra (Starlette, uvicorn), imported only by `ralph serve`."""
