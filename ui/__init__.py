"""The app's pure parts: control table, language catalogs, figures. No Streamlit import here."""
