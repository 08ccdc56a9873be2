from enum import StrEnum


class DeploymentType(StrEnum):
    DEV = "dev"
    DEV_FREE = "dev_free"
    PROD = "prod"

    def __str__(self) -> str:
        return str(self.value)
