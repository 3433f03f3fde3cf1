"""Live class (the teacher's page, on the projector): start a class, show how to join, lead it through
tour steps, Explorer views and questions, reveal what the class answered, and once it has ended show its
summary (``widgets.live_class``)."""

import streamlit as st

from ui.text import Text
from widgets.chrome import language
from widgets.live_class import class_page, class_summary, current_class, invitation

t = Text(language())
st.title(t("class.title"))
record = current_class(t)
if record is None:
    invitation(t)
elif record.ended:
    class_summary(record, t)
else:
    class_page(record, t, st.session_state.get("projector_on", False))
