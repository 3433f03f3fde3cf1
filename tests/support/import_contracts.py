"""A contract type for import-linter (pyproject.toml, ``[tool.importlinter]``): the source modules import, beside
the project's own packages and the standard library, only the ``allowed`` external packages; a new dependency of
the engine fails the suite, named with the line that imports it."""

from __future__ import annotations

import sys

from importlinter import Contract, ContractCheck, fields, output


class OnlyExternalsContract(Contract):
    type_name = "only_externals"

    source_modules = fields.ListField(subfield=fields.ModuleField())
    allowed = fields.ListField(subfield=fields.StringField())

    def check(self, graph, verbose: bool) -> ContractCheck:
        own = set(self.session_options.get("root_packages") or [self.session_options.get("root_package")])
        known = own | set(sys.stdlib_module_names) | set(self.allowed)
        broken = []
        for source in self.source_modules:
            for module in sorted({source.name} | graph.find_descendants(source.name)):
                for imported in sorted(graph.find_modules_directly_imported_by(module)):
                    if imported.split(".")[0] not in known:
                        lines = [d["line_number"] for d in graph.get_import_details(importer=module, imported=imported)]
                        broken.append((module, imported, lines))
        return ContractCheck(kept=not broken, metadata={"broken": broken})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for module, imported, lines in check.metadata["broken"]:
            output.print_error(f"{module} imports {imported} (l. {', '.join(map(str, lines))}), which is not allowed")
            output.new_line()
