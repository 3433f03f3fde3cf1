"""BlockStab: the router. Page config once, language and projector mode, then the chosen page.

Streamlit runs this file as ``__main__``. multiprocessing runs the running script again, as
``__mp_main__``, in every Depth-lab and block-range worker process (``server/lab_worker.py``), which
needs none of it: hence the guard, and the imports inside it (Streamlit and pandas cost a worker 1 s).
"""


def run_by_streamlit_itself() -> bool:
    """Whether this is ``streamlit run app.py``, which lacks the app's own routes and the server's patches:
    Streamlit puts its main script in ``sys.argv[0]``, which ``python -m server`` makes server/asgi.py (it runs
    this file per session) and AppTest leaves alone."""
    import sys
    from pathlib import Path

    return Path(sys.argv[0]).resolve() == Path(__file__).resolve()


def route() -> None:
    """The page config, the language, the chrome around every page, then the page the URL names."""
    # Imported before any page runs: Plotly checks sys.modules for pandas without importing it, so
    # a figure built while another session's thread is still importing pandas (st.dataframe, the
    # scenario editor) failed with "partially initialized module 'pandas'" (seen in the soak test).
    import pandas  # noqa: F401
    import streamlit as st

    from server.resume import RESUMED, RESUMED_STATES
    from ui.text import Text
    from widgets.chrome import APP_ICON, app_chrome, language, query_problems, warn_about_url

    # Projector mode from the link, or kept from this session's toggle when a page switches pages (the
    # toggle's URL binding writes it back): the sidebar then starts closed on every page.
    projector_on = st.query_params.get("projector") == "true" or st.session_state.get("projector") is True
    # A page icon of our own: without one the browser shows each page's Material icon as the
    # favicon, fetched from an online font service on every rerun.
    st.set_page_config(page_title="BlockStab", page_icon=APP_ICON, layout="wide",
                       initial_sidebar_state="collapsed" if projector_on else "auto")
    url_problems = query_problems()  # before anything rewrites the URL
    t = Text(language())
    if run_by_streamlit_itself():  # one sentence, on the page and in the server's log, instead of a broken app
        print(Text("en")("app.run_with_server"), flush=True)
        st.error(t("app.run_with_server"), icon=":material/terminal:")
        st.stop()
    # A slot of its own: a notice that came only now would move every element after it down one place,
    # and the browser would redraw them all (the Explorer's charts went blank until the run reached them).
    notice = st.empty()
    if st.session_state.pop(RESUMED, False):  # (server/resume.py: the page is back on a new session)
        notice.info(t("app.new_session"), icon=":material/sync:")
    warn_about_url(t, url_problems)
    st.session_state["projector_on"] = app_chrome(t)

    # The default page is served at /; its url_path only names it, and must not be a pages/ file's stem
    # (Streamlit 1.67 would take the page for an old-style one, as server/__main__.py explains). /explore,
    # the Explorer's documented path, is a hidden page that runs the Explorer.
    pages = [
        st.Page("pages/explorer.py", title=t("page.explorer"), icon=":material/science:", url_path="start",
                default=True),
        st.Page("pages/explore_alias.py", title=t("page.explorer"), icon=":material/science:", url_path="explore",
                visibility="hidden"),
        st.Page("pages/tour.py", title=t("page.tour"), icon=":material/slideshow:", url_path="walk"),
        st.Page("pages/worked_case.py", title=t("page.case"), icon=":material/table_chart:", url_path="case"),
        st.Page("pages/exercises.py", title=t("page.exercises"), icon=":material/quiz:", url_path="practice"),
        st.Page("pages/norm_geometry.py", title=t("page.geometry"), icon=":material/change_history:",
                url_path="geometry"),
        st.Page("pages/scenario_editor.py", title=t("page.editor"), icon=":material/edit_note:", url_path="scenario"),
        st.Page("pages/depth_lab.py", title=t("page.lab"), icon=":material/stacked_line_chart:", url_path="lab"),
        st.Page("pages/real_model.py", title=t("page.real"), icon=":material/psychology:", url_path="real"),
        st.Page("pages/teachers.py", title=t("page.teachers"), icon=":material/school:", url_path="teach"),
        st.Page("pages/live_class.py", title=t("page.class"), icon=":material/co_present:", url_path="class"),
    ]
    try:
        st.navigation(pages, position="sidebar").run()
    finally:  # what a page came back with on a new session is read in its first run only (server/resume.py)
        st.session_state.pop(RESUMED_STATES, None)


if __name__ == "__main__":
    route()
