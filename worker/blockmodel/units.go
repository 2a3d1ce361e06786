package blockmodel

import "fmt"

// UnitType is the quantity a unit measures.
type UnitType string

// The unit types of the units route.
const (
	Length          UnitType = "LENGTH"
	Mass            UnitType = "MASS"
	Volume          UnitType = "VOLUME"
	Value           UnitType = "VALUE"
	MassPerVolume   UnitType = "MASS_PER_VOLUME"
	MassPerMass     UnitType = "MASS_PER_MASS"
	VolumePerVolume UnitType = "VOLUME_PER_VOLUME"
	ValuePerMass    UnitType = "VALUE_PER_MASS"
)

// Unit is one row of the units table (GET …/units). ConversionFactor
// converts a value in the unit to the reference unit of its type: metre,
// kilogram, cubic metre, kg/m³, mass fraction, volume fraction, the
// currency unit ($) and $ per kilogram.
type Unit struct {
	UnitID           string   `json:"unit_id"`
	Symbol           string   `json:"symbol"`
	Description      string   `json:"description"`
	UnitType         UnitType `json:"unit_type"`
	ConversionFactor float64  `json:"conversion_factor"`
}

// Units returns the engine's fixed units table (A.4.4, OPEN-41): the ids
// the public client names, including both spellings it has used for mass
// fractions ("%" and "%[mass]", "ppm" and "ppm[mass]", …). The slice is a
// fresh copy.
func Units() []Unit {
	const ozTr = 0.0311034768 // troy ounce in kg
	const oz = 0.028349523125
	const lb = 0.45359237
	return []Unit{
		{"m", "m", "metre", Length, 1},
		{"cm", "cm", "centimetre", Length, 0.01},
		{"mm", "mm", "millimetre", Length, 0.001},
		{"km", "km", "kilometre", Length, 1000},
		{"ft", "ft", "foot", Length, 0.3048},
		{"in", "in", "inch", Length, 0.0254},
		{"yd", "yd", "yard", Length, 0.9144},
		{"mi", "mi", "mile", Length, 1609.344},
		{"g", "g", "gram", Mass, 0.001},
		{"kg", "kg", "kilogram", Mass, 1},
		{"t", "t", "tonne", Mass, 1000},
		{"lb", "lb", "pound", Mass, lb},
		{"oz", "oz", "ounce", Mass, oz},
		{"oz_tr", "oz tr", "troy ounce", Mass, ozTr},
		{"m3", "m³", "cubic metre", Volume, 1},
		{"cm3", "cm³", "cubic centimetre", Volume, 1e-6},
		{"L", "L", "litre", Volume, 0.001},
		{"ft3", "ft³", "cubic foot", Volume, 0.028316846592},
		{"gal_us", "gal", "US gallon", Volume, 0.003785411784},
		{"kg/m3", "kg/m³", "kilograms per cubic metre", MassPerVolume, 1},
		{"g/cm3", "g/cm³", "grams per cubic centimetre", MassPerVolume, 1000},
		{"t/m3", "t/m³", "tonnes per cubic metre", MassPerVolume, 1000},
		{"lb/ft3", "lb/ft³", "pounds per cubic foot", MassPerVolume, lb / 0.028316846592},
		{"g/t", "g/t", "grams per tonne", MassPerMass, 1e-6},
		{"kg/t", "kg/t", "kilograms per tonne", MassPerMass, 1e-3},
		{"%", "%", "percent (mass)", MassPerMass, 0.01},
		{"%[mass]", "%", "percent (mass)", MassPerMass, 0.01},
		{"ppm", "ppm", "parts per million (mass)", MassPerMass, 1e-6},
		{"ppm[mass]", "ppm", "parts per million (mass)", MassPerMass, 1e-6},
		{"ppb", "ppb", "parts per billion (mass)", MassPerMass, 1e-9},
		{"ppb[mass]", "ppb", "parts per billion (mass)", MassPerMass, 1e-9},
		{"oz/t", "oz/t", "ounces per tonne", MassPerMass, oz / 1000},
		{"oz_tr/t", "oz tr/t", "troy ounces per tonne", MassPerMass, ozTr / 1000},
		{"lb/t", "lb/t", "pounds per tonne", MassPerMass, lb / 1000},
		{"%_vol", "%", "percent (volume)", VolumePerVolume, 0.01},
		{"%[volume]", "%", "percent (volume)", VolumePerVolume, 0.01},
		{"$", "$", "dollar", Value, 1},
		{"$/t", "$/t", "dollars per tonne", ValuePerMass, 0.001},
		{"$/oz", "$/oz", "dollars per ounce", ValuePerMass, 1 / oz},
	}
}

// LookupUnit returns the unit of an id (case-sensitive, as the client
// sends them).
func LookupUnit(id string) (Unit, bool) {
	for _, u := range Units() {
		if u.UnitID == id {
			return u, true
		}
	}
	return Unit{}, false
}

// CheckSizeUnit checks a model's size_unit_id: a LENGTH unit of the table.
func CheckSizeUnit(id string) error {
	u, ok := LookupUnit(id)
	if !ok {
		return fmt.Errorf("%q is not a known unit id", id)
	}
	if u.UnitType != Length {
		return fmt.Errorf("%q is a %s unit, not a LENGTH unit", id, u.UnitType)
	}
	return nil
}

// CheckColumnUnit checks a column's unit_id: any unit of the table.
func CheckColumnUnit(id string) error {
	if _, ok := LookupUnit(id); !ok {
		return fmt.Errorf("%q is not a known unit id", id)
	}
	return nil
}
