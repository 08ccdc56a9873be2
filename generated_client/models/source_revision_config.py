from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SourceRevisionConfig")


@_attrs_define
class SourceRevisionConfig:
    """
    Attributes:
        repo_ref (None | str | Unset):
        graph_config_path (None | str | Unset):
        image_uri (None | str | Unset):
        source_tarball_path (None | str | Unset):
        repo_commit_sha (None | str | Unset):
    """

    repo_ref: None | str | Unset = UNSET
    graph_config_path: None | str | Unset = UNSET
    image_uri: None | str | Unset = UNSET
    source_tarball_path: None | str | Unset = UNSET
    repo_commit_sha: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        repo_ref: None | str | Unset
        if isinstance(self.repo_ref, Unset):
            repo_ref = UNSET
        else:
            repo_ref = self.repo_ref

        graph_config_path: None | str | Unset
        if isinstance(self.graph_config_path, Unset):
            graph_config_path = UNSET
        else:
            graph_config_path = self.graph_config_path

        image_uri: None | str | Unset
        if isinstance(self.image_uri, Unset):
            image_uri = UNSET
        else:
            image_uri = self.image_uri

        source_tarball_path: None | str | Unset
        if isinstance(self.source_tarball_path, Unset):
            source_tarball_path = UNSET
        else:
            source_tarball_path = self.source_tarball_path

        repo_commit_sha: None | str | Unset
        if isinstance(self.repo_commit_sha, Unset):
            repo_commit_sha = UNSET
        else:
            repo_commit_sha = self.repo_commit_sha

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if repo_ref is not UNSET:
            field_dict["repo_ref"] = repo_ref
        if graph_config_path is not UNSET:
            field_dict["graph_config_path"] = graph_config_path
        if image_uri is not UNSET:
            field_dict["image_uri"] = image_uri
        if source_tarball_path is not UNSET:
            field_dict["source_tarball_path"] = source_tarball_path
        if repo_commit_sha is not UNSET:
            field_dict["repo_commit_sha"] = repo_commit_sha

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_repo_ref(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        repo_ref = _parse_repo_ref(d.pop("repo_ref", UNSET))

        def _parse_graph_config_path(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        graph_config_path = _parse_graph_config_path(d.pop("graph_config_path", UNSET))

        def _parse_image_uri(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        image_uri = _parse_image_uri(d.pop("image_uri", UNSET))

        def _parse_source_tarball_path(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        source_tarball_path = _parse_source_tarball_path(
            d.pop("source_tarball_path", UNSET)
        )

        def _parse_repo_commit_sha(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        repo_commit_sha = _parse_repo_commit_sha(d.pop("repo_commit_sha", UNSET))

        source_revision_config = cls(
            repo_ref=repo_ref,
            graph_config_path=graph_config_path,
            image_uri=image_uri,
            source_tarball_path=source_tarball_path,
            repo_commit_sha=repo_commit_sha,
        )

        source_revision_config.additional_properties = d
        return source_revision_config

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
