"""What the tests and the benchmarks both start and speak: the app's servers, Redis and HAProxy from the
project's own scripts (``local_server``), a client of Streamlit's protocol (``protocol_client``), a live class's
phones (``phones``) and what one student's script may try to send the server (``oversize``)."""
