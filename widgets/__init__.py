"""The app's parts drawn with Streamlit, which pages are laid out from: the controls' widgets, the chrome every
page has (language, projector mode, the URL's checks), the Explorer's Streamlit side, a tour step, and a live
class's teacher's side. They draw what ``ui`` computes and use what ``server`` keeps per process."""
