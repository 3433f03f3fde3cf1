"""What the tests and the benchmarks both start and speak: the app's servers, Redis and HAProxy from the
project's own scripts (``local_server``), and a client of Streamlit's protocol (``protocol_client``)."""
