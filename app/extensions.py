"""The shared extension objects: one SQLAlchemy session for every blueprint and the CLI."""

from typing import TYPE_CHECKING

from flask_cors import CORS
from flask_migrate import Migrate
from flask_sqlalchemy import SQLAlchemy
from sqlalchemy import MetaData
from sqlalchemy.orm import DeclarativeBase

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


db = SQLAlchemy(model_class=Base)
# The models' base class. db.Model is built at run time from Base's body (Flask-SQLAlchemy
# adds its table naming and the `query` property), which a type checker cannot follow as a
# base class; it sees the models as subclasses of Base: the same metadata and columns.
if TYPE_CHECKING:
    Model = Base
else:
    Model = db.Model
migrate = Migrate()
cors = CORS()
